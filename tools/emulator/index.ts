// Public entry point of the gateway emulator.
export { startEmulator, DEMO_KEYS, EmulatorState, FAULT_NAMES } from './server';
export type { EmulatorOptions, RunningEmulator, RecordedRequest, FaultName, FaultSpec } from './server';
export { IMAGE_MODELS, CATALOG, PASSTHROUGH_VALUES, findImageModel, type EmulatorImageModel } from './catalog';
