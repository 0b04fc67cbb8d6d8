#!/usr/bin/env node
import { runBridgeCli } from './cli.js';

process.exit(await runBridgeCli(process.argv.slice(2)));
