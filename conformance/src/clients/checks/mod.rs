//! The client checks, by family. Each judges a [`Session`](super::judge::Session) and nothing
//! else, so the same rule judges `client` mode's scripted sessions and `observe`'s real ones.

mod http;
mod lifecycle;
mod messages;
mod modern;
mod stdio;

use super::judge::ClientCheck;

/// Every client check, in report order.
pub(crate) fn all() -> Vec<ClientCheck> {
    let mut checks = lifecycle::checks();
    checks.extend(messages::checks());
    checks.extend(modern::checks());
    checks.extend(stdio::checks());
    checks.extend(http::checks());
    checks
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod catalogue {
    use crate::ids::client::ALL;

    #[test]
    fn the_id_table_and_the_catalogue_agree() {
        let ids: Vec<String> = super::all().into_iter().map(|c| c.info.id).collect();
        let table: Vec<String> = ALL.iter().map(|id| id.as_str().to_owned()).collect();
        let mut sorted_ids = ids.clone();
        sorted_ids.sort();
        let mut sorted_table = table.clone();
        sorted_table.sort();
        assert_eq!(sorted_ids, sorted_table);
    }
}
