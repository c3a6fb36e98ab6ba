import { expect, test } from 'vitest'
import { version } from '../index'

test('version', () => {
  expect(version).toMatch(/^6\./)
})
