import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['./playground/**/*.spec.[tj]s'],
  },
})
