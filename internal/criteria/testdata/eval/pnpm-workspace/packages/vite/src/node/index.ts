export const version: string = '6.2.0'
