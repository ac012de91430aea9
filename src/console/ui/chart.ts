/** Horizontal bar charts drawn with plain elements (widths through CSSOM, which the CSP allows). */
import { h } from "./dom";

export interface Bar {
  label: string;
  value: number;
  text: string;
  /** A budget line, when there is one: the bar turns to a warning past 80 %. */
  limit?: number | null;
}

export function barChart(title: string, bars: Bar[], empty: string): HTMLElement {
  const max = Math.max(1, ...bars.map((bar) => Math.max(bar.value, bar.limit ?? 0)));
  const figure = h("figure", { class: "chart" }, h("figcaption", {}, title));
  if (bars.length === 0 || bars.every((bar) => bar.value === 0)) {
    figure.append(h("p", { class: "state empty" }, empty));
    return figure;
  }
  for (const bar of bars) {
    const fill = h("span", { class: "fill" });
    fill.style.width = `${(bar.value / max) * 100}%`;
    if (bar.limit && bar.value >= bar.limit * 0.8) fill.classList.add("warn");
    const track = h("span", { class: "track", role: "img", "aria-label": `${bar.label}: ${bar.text}` }, fill);
    if (bar.limit) {
      const mark = h("span", { class: "limit", title: "budget" });
      mark.style.left = `${(bar.limit / max) * 100}%`;
      track.append(mark);
    }
    figure.append(
      h(
        "div",
        { class: "bar" },
        h("span", { class: "bar-label" }, bar.label),
        track,
        h("span", { class: "bar-value" }, bar.text),
      ),
    );
  }
  return figure;
}
