// Lifecycle: the agent's profile and state, its schedules, export, sleep/destroy and erasure.
// The feature's public face: code outside this folder imports the feature only through this file.
export { AgentErasure, type ErasureReceipt } from "./erasure";
export { exportStream } from "./export";
export { AgentLifecycle } from "./lifecycle";
export { AgentProfile } from "./profile";
export { type AgentCallback, type AgentScheduler, armSagaWatch, Watchdog, disarmSagaWatch } from "./schedule";
export { persistSdkName } from "./sdk-name";
