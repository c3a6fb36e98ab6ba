import { compose } from '../src'

describe('compose', () => {
  it('composes right to left', () => {
    expect(compose<number>(x => x + 1, x => x * 2)(3)).toBe(7)
  })
})
