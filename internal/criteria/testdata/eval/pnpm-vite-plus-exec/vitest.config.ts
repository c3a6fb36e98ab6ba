import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    projects: [{ extends: true, test: { name: 'unit', include: ['packages/**/__tests__/**/*.spec.ts'] } }],
  },
})
