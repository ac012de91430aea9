/** The widget's stylesheet. Every colour, radius and font is a CSS custom property the host page can set on `vigil-chat`. */
export const WIDGET_CSS = `
:host {
  --vigil-font: system-ui, -apple-system, "Segoe UI", sans-serif;
  --vigil-font-size: 14px;
  --vigil-bg: #ffffff;
  --vigil-fg: #1b1f24;
  --vigil-muted: #5b6470;
  --vigil-border: #d6dae0;
  --vigil-accent: #2557d6;
  --vigil-accent-fg: #ffffff;
  --vigil-user-bg: var(--vigil-accent);
  --vigil-user-fg: var(--vigil-accent-fg);
  --vigil-agent-bg: #f0f2f5;
  --vigil-agent-fg: var(--vigil-fg);
  --vigil-error: #b42318;
  --vigil-radius: 12px;
  --vigil-height: 480px;
  --vigil-focus: 0 0 0 3px color-mix(in srgb, var(--vigil-accent) 35%, transparent);
  display: block;
  font: var(--vigil-font-size)/1.45 var(--vigil-font);
  color: var(--vigil-fg);
}
* { box-sizing: border-box; }
[hidden] { display: none !important; }
.chat { display: flex; flex-direction: column; height: var(--vigil-height); background: var(--vigil-bg); border: 1px solid var(--vigil-border); border-radius: var(--vigil-radius); overflow: hidden; }
header { display: flex; align-items: center; justify-content: space-between; gap: .5rem; padding: .55rem .8rem; border-bottom: 1px solid var(--vigil-border); }
.title { font-weight: 600; }
.status { font-size: .85em; color: var(--vigil-muted); }
.status[data-state="failed"] { color: var(--vigil-error); }
.log { flex: 1; overflow-y: auto; padding: .75rem; display: flex; flex-direction: column; gap: .5rem; }
.log:focus-visible, button:focus-visible, textarea:focus-visible, input:focus-visible { outline: none; box-shadow: var(--vigil-focus); }
.msg { max-width: 85%; padding: .45rem .7rem; border-radius: var(--vigil-radius); white-space: pre-wrap; overflow-wrap: anywhere; }
.msg.user { align-self: flex-end; background: var(--vigil-user-bg); color: var(--vigil-user-fg); border-bottom-right-radius: 4px; }
.msg.assistant, .msg.draft { align-self: flex-start; background: var(--vigil-agent-bg); color: var(--vigil-agent-fg); border-bottom-left-radius: 4px; }
.msg.draft::after { content: "▍"; opacity: .6; }
.note, .tool { align-self: center; font-size: .85em; color: var(--vigil-muted); }
.tool[data-status="failed"], .error { color: var(--vigil-error); }
.error { align-self: center; font-size: .85em; }
.decision { align-self: stretch; border: 1px solid var(--vigil-border); border-left: 4px solid var(--vigil-accent); border-radius: var(--vigil-radius); padding: .6rem .75rem; }
.decision p { margin: 0 0 .45rem; }
.decision .detail { color: var(--vigil-muted); font-size: .85em; overflow-wrap: anywhere; }
.decision .actions { display: flex; flex-wrap: wrap; gap: .4rem; }
.decision .fields { display: grid; grid-template-columns: max-content 1fr; gap: .1rem .6rem; margin: 0 0 .45rem; }
.decision .fields dt { font-weight: 600; } .decision .fields dd { margin: 0; overflow-wrap: anywhere; }
.decision .answer { color: var(--vigil-muted); font-size: .85em; margin-top: .35rem; }
.decision form { display: flex; gap: .4rem; margin-top: .45rem; }
button { font: inherit; cursor: pointer; border-radius: calc(var(--vigil-radius) / 1.5); border: 1px solid var(--vigil-accent); background: var(--vigil-bg); color: var(--vigil-accent); padding: .35rem .8rem; }
button.primary, button[type="submit"] { background: var(--vigil-accent); color: var(--vigil-accent-fg); }
button:disabled { opacity: .55; cursor: default; }
.older { align-self: center; margin: .4rem 0 0; font-size: .85em; }
.typing { padding: 0 .8rem .3rem; color: var(--vigil-muted); font-size: .85em; min-height: 1.2em; }
.composer { display: flex; gap: .5rem; padding: .6rem; border-top: 1px solid var(--vigil-border); }
textarea, input[type="text"] { flex: 1; font: inherit; color: inherit; background: var(--vigil-bg); border: 1px solid var(--vigil-border); border-radius: calc(var(--vigil-radius) / 1.5); padding: .4rem .55rem; resize: none; }
.sr-only { position: absolute; width: 1px; height: 1px; padding: 0; margin: -1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; border: 0; }
@media (prefers-reduced-motion: reduce) { .msg.draft::after { content: ""; } }
`;
