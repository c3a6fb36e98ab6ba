declare function chalk(text: string): string;
export default chalk;
