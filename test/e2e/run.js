#!/usr/bin/env node
// Browser end-to-end suite runner (placeholder until the task pane and preview land).
console.log("e2e: no browser journeys defined yet");
