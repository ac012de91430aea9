/** Where the Agents SDK looks for a DO's name when `ctx.id.name` is absent (its legacy partyserver record, still read by 0.32). */
const SDK_NAME_KEY = "__ps_name";

/**
 * Every entry point knows the DO's name: an alarm after a restart may arrive without `ctx.id.name`,
 * and the SDK then reads this fallback record (else: "AgentDO could not determine its Durable Object
 * name"). The SDK never writes it on a native RPC call — the way every agent is reached — so it is
 * written here, on the first activation that has the name.
 */
export function persistSdkName(ctx: DurableObjectState): void {
  const name = ctx.id.name;
  if (!name) return;
  void ctx.blockConcurrencyWhile(async () => {
    if ((await ctx.storage.get(SDK_NAME_KEY)) !== name) await ctx.storage.put(SDK_NAME_KEY, name);
  });
}
