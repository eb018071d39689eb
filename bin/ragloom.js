#!/usr/bin/env node
// The CLI runs from the compiled package; `npm install` in a clone builds it (the prepare script).
import { main } from '../dist/cli/main.js';

process.exitCode = await main(process.argv.slice(2));
