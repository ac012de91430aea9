// Timers: the agent's scheduled wakes and the one alarm that fires them.
// The feature's public face: other features, the wiring and the facade import it only through this file.
export { TimerAlarm } from "./alarm";
export { type TickOutcome, Timers } from "./timers";
