//! doctor's report, run in process against files the tests write.
