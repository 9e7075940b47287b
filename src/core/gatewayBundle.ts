// Entry of the lazily loaded chunk (dist/gateway.js): the HTTP stack is heavy, so activation
// does not load it; the first call that talks to the gateway does. Recover Unsaved Images loads its
// reading of the recovery folder from here too, and the start-up's settling of jobs a dead extension
// host left in flight: activation does not need them.
export { GatewayClient } from './client';
export { createDispatcher } from './proxy';
export { listRecoverable, moveRecoverable, readAnswersAgain, removeRecoverable } from './recoveryFolder';
export { describeInterrupted, settleRecord } from '../jobs/interrupted';
