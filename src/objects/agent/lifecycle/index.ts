// Lifecycle: the agent's profile and state, its schedules, export, sleep/destroy and erasure.
// The feature's public face: other features, the wiring and the facade import it only through this file.
export { AgentErasure, type ErasureReceipt } from "./erasure";
export { exportStream } from "./export";
export { AgentLifecycle } from "./lifecycle";
export { AgentProfile } from "./profile";
export { type AgentCallback, type AgentScheduler, armSagaWatch, armWatchdog, disarmSagaWatch } from "./schedule";
export { persistSdkName } from "./sdk-name";
