import { expect, it } from 'bun:test'

it('runs on bun', () => {
  expect(typeof Bun).toBe('object')
})
