import { expect, test } from 'vitest'
import { isArray } from '../src'

test('isArray', () => {
  expect(isArray([])).toBe(true)
})
