// Delegation: spawning child agents, their lineage and the reports they send back.
// The feature's public face: code outside this folder imports the feature only through this file.
export { ChildReports } from "./child-report";
export { ChildrenStore } from "./children";
export { Delegation } from "./delegation";
export { type ChildReport, type ChildWake, maxStepsFor, Spawner } from "./spawn";
