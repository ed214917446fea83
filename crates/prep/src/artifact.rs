//! The six artifacts of an RFP package as typed content, and the slots that hold them with their states. The types
//! live with the publish gate in `pactwise_rules::prep` (one home for the package's rules); they are re-exported
//! here so Prep Studio's API stays as it was.

pub use pactwise_rules::prep::artifact::*;
pub use pactwise_rules::prep::hash_content;
