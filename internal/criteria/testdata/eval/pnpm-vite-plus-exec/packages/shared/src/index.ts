export const isArray: typeof Array.isArray = Array.isArray
