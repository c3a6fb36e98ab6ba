'use strict'

var assert = require('assert')
var express = require('../')

describe('app', function () {
  it('should be callable', function () {
    assert.strictEqual(typeof express(), 'function')
  })
})
