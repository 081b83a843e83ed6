//! Crate docs.
use std::fmt;

/// A point.
#[derive(Debug)]
pub struct Point {
    x: i32,
}

impl Point {
    /// Makes one.
    pub fn new(x: i32) -> Self {
        Point { x }
    }

    pub fn x(&self) -> i32 {
        self.x
    }
}

impl fmt::Display for Point {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.x)
    }
}

/// Parses the arguments.
fn parse_args() -> Vec<String> {
    fn nested() {}
    std::env::args().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn works() {}
}
