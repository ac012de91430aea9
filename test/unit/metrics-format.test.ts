import { describe, expect, it } from "vitest";
import { escapeLabelValue, formatLabels, renderPrometheus } from "../../src/objects/tenant/channels/metrics";

describe("Prometheus text format", () => {
  it("escapes backslash, double quote and newline in label values", () => {
    expect(escapeLabelValue('a\\b"c\nd')).toBe('a\\\\b\\"c\\nd');
    expect(formatLabels({ z: "1", a: 'say "hi"' })).toBe('a="say \\"hi\\"",z="1"');
  });

  it("emits HELP and TYPE for every family and one sample per line", () => {
    const text = renderPrometheus([{ name: "vigil_runs_total", labels: formatLabels({ outcome: "completed" }), value: 3 }, { name: "vigil_tool_calls_total", labels: "", value: 2 }]);
    expect(text).toContain("# HELP vigil_runs_total ");
    expect(text).toContain("# TYPE vigil_runs_total counter\nvigil_runs_total{outcome=\"completed\"} 3\n");
    expect(text).toContain("vigil_tool_calls_total 2\n");
    expect(text.endsWith("\n")).toBe(true);
  });
});
