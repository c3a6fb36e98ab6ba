'use strict'

module.exports = { defaults: { host: 'localhost', port: 5432 } }
