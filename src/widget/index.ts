/** Browser entry of `GET /widget.js` (bundled by scripts/build-widget.mjs): defines `<vigil-chat>` once. */
import { VigilChatElement } from "./element";

if (!customElements.get("vigil-chat")) customElements.define("vigil-chat", VigilChatElement);
