// Timers: the agent's scheduled wakes and the one alarm that fires them.
// The feature's public face: code outside this folder imports the feature only through this file.
export { TimerAlarm } from "./alarm";
export { type TickOutcome, Timers } from "./timers";
