#!/usr/bin/env node
/* placeholder for the vendored Yarn 3.4.1 release */
