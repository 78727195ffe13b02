import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";
import react from "@vitejs/plugin-react";

// The dojo page is built once (node ../node_modules/vite/bin/vite.js build
// --config dojo/vite.config.js, from examples/copilotkit) into dojo/dist,
// which dojo/server.mjs serves beside the CopilotKit runtime. Its packages
// are examples/copilotkit's, pinned in its package-lock.json.
export default defineConfig({
  root: fileURLToPath(new URL(".", import.meta.url)),
  plugins: [react()],
  build: { outDir: "dist", emptyOutDir: true, chunkSizeWarningLimit: 8192 },
});
