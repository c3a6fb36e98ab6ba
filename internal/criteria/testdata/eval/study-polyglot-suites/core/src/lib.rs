#[cfg(test)]
mod tests { #[test] fn t() {} }
