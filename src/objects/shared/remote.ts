/**
 * The caller's view of a Durable Object's RPC methods. Workers' generated stub types erase any
 * field typed `unknown` (free-form JSON such as message content), so stubs are viewed through this
 * mapping instead: same methods, same argument and result types, always async.
 */
export type Remote<T> = {
  [K in keyof T as T[K] extends (...args: never[]) => unknown ? K : never]: T[K] extends (...args: infer A) => infer R
    ? (...args: A) => Promise<Awaited<R>>
    : never;
};
