// Entry of the lazily loaded chunk (dist/gateway.js): the HTTP stack is heavy, so activation
// does not load it; the first call that talks to the gateway does. Recover Unsaved Images loads its
// reading of the recovery folder from here too: activation does not need it.
export { GatewayClient } from './client';
export { createDispatcher } from '../gateway/proxy';
export { downloadAgain, listRecoverable, moveRecoverable, readAnswersAgain, removeRecoverable } from '../files/recoveryFolder';
