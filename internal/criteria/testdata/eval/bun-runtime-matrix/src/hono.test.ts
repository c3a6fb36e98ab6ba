import { Hono } from './hono'

describe('Hono', () => {
  it('registers routes', () => {
    expect(new Hono().get('/').routes).toEqual(['/'])
  })
})
