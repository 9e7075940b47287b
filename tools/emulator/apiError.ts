// The emulator's error body: OpenAI style {"error":{message,type,param,code}}.

/** Thrown inside the emulator's handlers and turned into the answer; an Error, so it carries a stack. */
export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly param: string | null = null,
    readonly type: string = typeForStatus(status),
  ) {
    super(message);
    this.name = 'ApiFailure';
  }

  body(): string {
    return JSON.stringify({ error: { message: this.message, type: this.type, param: this.param, code: this.code } });
  }
}

function typeForStatus(status: number): string {
  switch (status) {
    case 401:
      return 'authentication_error';
    case 402:
      return 'insufficient_funds';
    case 404:
      return 'not_found_error';
    case 429:
      return 'rate_limit_error';
    default:
      return status >= 500 ? 'server_error' : 'invalid_request_error';
  }
}

/** An error in the FastAPI form, {"detail": "..."} (the ru-errors form). */
export class DetailFailure extends ApiFailure {
  override body(): string {
    return JSON.stringify({ detail: this.message });
  }
}

export const badRequest = (code: string, message: string, param: string | null = null) => new ApiFailure(400, code, message, param);
