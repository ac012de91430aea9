// Small statistics and table helpers (no dependencies).

export function sorted(values) {
  return [...values].sort((a, b) => a - b);
}

/** Linear-interpolated percentile, p in [0, 100]. */
export function percentile(values, p) {
  if (values.length === 0) return NaN;
  const s = sorted(values);
  const rank = (p / 100) * (s.length - 1);
  const lo = Math.floor(rank);
  const hi = Math.ceil(rank);
  return s[lo] + (s[hi] - s[lo]) * (rank - lo);
}

export const median = (values) => percentile(values, 50);
export const mean = (values) => (values.length ? values.reduce((a, b) => a + b, 0) / values.length : NaN);

export function summarize(values) {
  return {
    n: values.length,
    min: Math.min(...values),
    p50: percentile(values, 50),
    p90: percentile(values, 90),
    p99: percentile(values, 99),
    max: Math.max(...values),
    mean: mean(values),
  };
}

/** Rounds numbers for JSON (keeps files readable). */
export function round(value, digits = 3) {
  if (typeof value !== "number" || !Number.isFinite(value)) return value;
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

export function roundAll(obj, digits = 3) {
  if (Array.isArray(obj)) return obj.map((v) => roundAll(v, digits));
  if (obj && typeof obj === "object") return Object.fromEntries(Object.entries(obj).map(([k, v]) => [k, roundAll(v, digits)]));
  return round(obj, digits);
}

export function fmt(value, digits = 1) {
  if (typeof value !== "number") return String(value);
  if (!Number.isFinite(value)) return "n/a";
  return value.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

/** Aligned text table: numbers (and strings that look numeric) right-aligned, others left-aligned. */
export function table(headers, rows) {
  const cells = [headers, ...rows].map((row) => row.map((c) => String(c)));
  const widths = headers.map((_, i) => Math.max(...cells.map((row) => (row[i] ?? "").length)));
  const numeric = headers.map((_, i) => rows.every((row) => /^[-+]?[\d,.]+(\s*[a-zµ×%]+)?$|^n\/a$/i.test(String(row[i]))));
  const line = (row) => row.map((c, i) => (numeric[i] ? c.padStart(widths[i]) : c.padEnd(widths[i]))).join("  ").trimEnd();
  const rule = widths.map((w) => "─".repeat(w)).join("  ");
  return [line(cells[0]), rule, ...cells.slice(1).map(line)].join("\n");
}
