// Entry of the lazily loaded chunk (dist/gateway.js): the HTTP stack is heavy, so activation
// does not load it; the first call that talks to the gateway does.
export { GatewayClient } from './client';
export { createDispatcher } from './proxy';
