'use strict'
const assert = require('assert')
const pg = require('../../lib')

assert.strictEqual(pg.defaults.port, 5432)
