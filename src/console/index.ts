/** Browser entry of `GET /console/app.js` (bundled by scripts/build-widget.mjs): mounts the console on #app. */
import { startConsole } from "./app";

const root = document.getElementById("app");
if (root) startConsole(root);
