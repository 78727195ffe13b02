import { defineConfig } from "vite";
import react from "@vitejs/plugin-react";

// The page is built once (npm run build) and served by server.mjs, which also
// hosts the CopilotKit runtime, so the browser needs one origin only.
export default defineConfig({
  plugins: [react()],
  build: { outDir: "dist", emptyOutDir: true, chunkSizeWarningLimit: 8192 },
  server: {
    // npm run dev: the runtime (node server.mjs) on :3000 answers the API
    // (the sign-in, the thread list and CopilotKit's routes).
    proxy: { "/api": "http://127.0.0.1:3000" },
  },
});
