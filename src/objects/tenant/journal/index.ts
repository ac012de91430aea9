// Journal: the tenant's source-of-truth records (kinds, rules, rows, change tokens) and the one writer.
// The feature's public face: code outside this folder imports the feature only through this file.
export { API_WRITE, Journal, type JournalListQuery, type JournalResult, type JournalWriteMeta, type TransactMode } from "./journal";
export { JournalWriter, type WriteResult } from "./writer";
export { JournalRows, toRecord, type JournalRow } from "./rows";
export { journalTokens, referencedIds, type JournalOp, type JournalWrite } from "./tokens";
export { JOURNAL_PAYLOAD_TYPE, KIND_META } from "./kinds";
