// Memory: message history, the assembled model context, recall, reports and memory slots.
// The feature's public face: code outside this folder imports the feature only through this file.
export { benchMemory, type BenchOp, runBenchOp } from "./bench-ops";
export { History } from "./history";
export { MemoryContext } from "./memory-context";
export { recall, type RecallHit, searchMessages } from "./recall";
export { Reports } from "./reports";
export { type MemoryView, readMemory, type SlotWrite, writeSlot } from "./slots";
