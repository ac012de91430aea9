/** The egress door: the Worker's only way out to the network (see door.ts). */
export { sendThroughDoor, type EgressOutcome, type EgressPurpose, type EgressRecord, type EgressRequest } from "./door";
