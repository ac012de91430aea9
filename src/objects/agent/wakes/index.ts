// Wakes: admission, the wake inbox, turning a wake into run input, draining, sessions.
// The feature's public face: code outside this folder imports the feature only through this file.
export { type TurnInput, WakeAdmission } from "./admission";
export { Drainer } from "./drain";
export { WakeDelivery } from "./delivery";
export { type EnqueueOutcome, type InboxItem, WakeInbox } from "./inbox";
export { appendWakeInput, cascadeDepthOf, provenanceOf, runMessageIds, wakeContext, withWakePrompt } from "./input";
export { Sessions } from "./sessions";
export { Interrupts } from "./interrupts";
