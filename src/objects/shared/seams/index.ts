// Test and bench seams of the Durable Objects: the one env guard, fault injection, table dumps.
// Production never reaches them: each answers not_found / does nothing unless VIGIL_FAULTS or VIGIL_BENCH is enabled.
export { dumpTables, type TableDump } from "./debug-dump";
export { FaultSeam, InjectedCrash } from "./faults";
export { Seams } from "./guard";
