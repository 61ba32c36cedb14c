//! The approval gate: a [`RiskTier::Approve`](super::spec::RiskTier::Approve) tool runs only
//! after the [`Approver`] says yes; with no approver configured it never runs.

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures::future::BoxFuture;
use futures::FutureExt;
use serde_json::Value;

use super::spec::{ToolOutput, ToolSpec};

/// Asked before each call of an `Approve` tool: (spec, arguments) -> allowed?
pub type Approver = Arc<dyn Fn(&ToolSpec, &Value) -> BoxFuture<'static, bool> + Send + Sync>;

/// An [`Approver`] from an async closure that takes owned copies of the spec and arguments
/// (the returned future must be `'static`, so it cannot borrow them).
pub fn approver<F, Fut>(f: F) -> Approver
where
    F: Fn(ToolSpec, Value) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = bool> + Send + 'static,
{
    Arc::new(move |spec, args| f(spec.clone(), args.clone()).boxed())
}

/// `Ok` when the approver allows the call; otherwise the output that explains why not.
pub(super) async fn check(
    approver: Option<&Approver>,
    spec: &ToolSpec,
    args: &Value,
) -> Result<(), ToolOutput> {
    let name = &spec.name;
    let Some(approver) = approver else {
        return Err(ToolOutput::error(format!(
            "Tool {name} was not run: it needs the user's approval and no approver is configured."
        )));
    };
    match AssertUnwindSafe(async { approver(spec, args).await })
        .catch_unwind()
        .await
    {
        Ok(true) => Ok(()),
        Ok(false) => Err(ToolOutput::error(format!(
            "The user denied the call to tool {name}; it was not run. Do not retry it unchanged."
        ))),
        Err(_) => Err(ToolOutput::error(format!(
            "Tool {name} was not run: the approval check failed (panicked)."
        ))),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Mutex;

    use serde_json::json;

    use crate::registry::tests::{constant, counting, spec};
    use crate::registry::{RiskTier, ToolRegistry};

    use super::*;

    fn fixed_approver(answer: bool) -> Approver {
        approver(move |_, _| async move { answer })
    }

    #[tokio::test]
    async fn approve_tool_without_approver_is_not_run() {
        let calls = Arc::new(AtomicUsize::new(0));
        let mut tools = ToolRegistry::new();
        tools
            .register(spec("rm", RiskTier::Approve), counting(&calls))
            .unwrap();
        assert_eq!(
            tools.execute("rm", json!({})).await,
            ToolOutput::error(
                "Tool rm was not run: it needs the user's approval and no approver is configured."
            )
        );
        assert_eq!(calls.load(Ordering::SeqCst), 0);
    }

    #[tokio::test]
    async fn approve_tool_denied_is_not_run() {
        let calls = Arc::new(AtomicUsize::new(0));
        let mut tools = ToolRegistry::new();
        tools
            .register(spec("rm", RiskTier::Approve), counting(&calls))
            .unwrap();
        tools.set_approver(fixed_approver(false));
        assert_eq!(
            tools.execute("rm", json!({})).await,
            ToolOutput::error(
                "The user denied the call to tool rm; it was not run. Do not retry it unchanged."
            )
        );
        assert_eq!(calls.load(Ordering::SeqCst), 0);
    }

    #[tokio::test]
    async fn approve_tool_approved_runs_once() {
        let calls = Arc::new(AtomicUsize::new(0));
        let mut tools = ToolRegistry::new();
        tools
            .register(spec("rm", RiskTier::Approve), counting(&calls))
            .unwrap();
        tools.set_approver(fixed_approver(true));
        assert_eq!(
            tools.execute("rm", json!({ "text": "x" })).await,
            ToolOutput::ok(r#"ran with {"text":"x"}"#)
        );
        assert_eq!(calls.load(Ordering::SeqCst), 1);
    }

    #[tokio::test]
    async fn approver_receives_the_spec_and_arguments() {
        let seen: Arc<Mutex<Vec<(ToolSpec, Value)>>> = Arc::default();
        let mut tools = ToolRegistry::new();
        tools
            .register(spec("rm", RiskTier::Approve), constant("done"))
            .unwrap();
        let log = Arc::clone(&seen);
        tools.set_approver(Arc::new(move |spec: &ToolSpec, args: &Value| {
            log.lock().unwrap().push((spec.clone(), args.clone()));
            async { true }.boxed()
        }));
        tools.execute("rm", json!({ "text": "/tmp/x" })).await;
        let seen = seen.lock().unwrap();
        assert_eq!(
            *seen,
            [(spec("rm", RiskTier::Approve), json!({ "text": "/tmp/x" }))]
        );
    }

    #[tokio::test]
    async fn only_approve_tools_ask_the_approver() {
        let asked = Arc::new(AtomicUsize::new(0));
        let calls = Arc::new(AtomicUsize::new(0));
        let mut tools = ToolRegistry::new();
        tools
            .register(spec("auto", RiskTier::Auto), counting(&calls))
            .unwrap();
        tools
            .register(spec("suggest", RiskTier::Suggest), counting(&calls))
            .unwrap();
        let counter = Arc::clone(&asked);
        tools.set_approver(approver(move |_, _| {
            counter.fetch_add(1, Ordering::SeqCst);
            async { false }
        }));
        assert!(!tools.execute("auto", json!({})).await.is_error);
        assert_eq!(
            tools.execute("suggest", json!({})).await,
            ToolOutput::ok("ran with {}")
        );
        assert_eq!(calls.load(Ordering::SeqCst), 2);
        assert_eq!(asked.load(Ordering::SeqCst), 0);
    }

    #[tokio::test]
    async fn suggest_tool_runs_without_an_approver() {
        let calls = Arc::new(AtomicUsize::new(0));
        let mut tools = ToolRegistry::new();
        tools
            .register(spec("s", RiskTier::Suggest), counting(&calls))
            .unwrap();
        assert_eq!(
            tools.execute("s", json!({})).await,
            ToolOutput::ok("ran with {}")
        );
        assert_eq!(calls.load(Ordering::SeqCst), 1);
    }

    #[tokio::test]
    async fn panicking_approver_denies_the_call() {
        let calls = Arc::new(AtomicUsize::new(0));
        let mut tools = ToolRegistry::new();
        tools
            .register(spec("rm", RiskTier::Approve), counting(&calls))
            .unwrap();
        tools.set_approver(approver(|_, _| async { panic!("approver bug") }));
        assert_eq!(
            tools.execute("rm", json!({})).await,
            ToolOutput::error("Tool rm was not run: the approval check failed (panicked).")
        );
        assert_eq!(calls.load(Ordering::SeqCst), 0);
    }
}
