// Runs: the run loop, its governor (budgets, brakes, quotas), traces, usage and paged reads.
// The feature's public face: code outside this folder imports the feature only through this file.
export { MeteredRunTrace, RunGovernor } from "./governor";
export { TenantSnapshotCache } from "./tenant-snapshot";
export { toModelMessages } from "./model-steps";
export { messagePage, runDetail, runPage } from "./paged-reads";
export { RunLoop, type RunLoopDeps } from "./run-loop";
export type { RunTrace } from "./run-trace";
export { RunView } from "./run-view";
export { RunTelemetry } from "./telemetry";
export { UsageStore } from "./usage-store";
