//! The job store's leases on both databases: concurrent claimers take every job exactly once, an
//! expired lease passes the job to another owner, and the old owner can neither renew nor finish
//! it; a released job goes back to the queue. The Postgres cases run against a real server:
//! `RLSOLVER_TEST_DATABASE_URL` (default postgres://postgres:postgres@127.0.0.1:5432/postgres;
//! `.ci/run` starts one from Debian's package with `.ci/postgres.sh`), each test in a database of
//! its own; without a server they skip with a printed reason, and fail under CI=true.

mod common;

use rlsolver::store::{JobState, Kinds, Lease, Store};
use serde_json::json;
use std::collections::HashMap;
use std::time::Duration;

/// A fresh, migrated database named after `test` on the test server, or None (skipped).
async fn postgres(test: &str) -> Option<Store> {
    let url = common::fresh_postgres(test).await?;
    Some(Store::connect_postgres(&url, Duration::from_secs(10)).await.unwrap())
}

async fn sqlite(test: &str) -> Store {
    let dir = std::env::temp_dir().join(format!("rlsolver-store-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    Store::open(&dir).await.unwrap()
}

/// 50 jobs, 8 claimers racing: every job is claimed once and finished once, by its claimer.
async fn claims_are_exclusive(store: Store) {
    for k in 0..50 {
        store.insert_job(&format!("job-{k:02}"), "training", &json!({"k": k}), None).await.unwrap();
    }
    let mut workers = Vec::new();
    for w in 0..8 {
        let store = store.clone();
        workers.push(tokio::spawn(async move {
            let owner = format!("worker-{w}");
            let mut taken = Vec::new();
            while let Some(job) = store.claim(&owner, Duration::from_secs(30), Kinds::Any).await.unwrap() {
                assert_eq!(job.state, JobState::Running);
                let done = store
                    .finish_claimed(&job.id, &owner, JobState::Succeeded, Some(&json!({"by": owner})), None)
                    .await
                    .unwrap();
                assert!(done, "{owner} lost {} before finishing it", job.id);
                taken.push(job.id);
            }
            (owner, taken)
        }));
    }
    let mut by_job: HashMap<String, String> = HashMap::new();
    for worker in workers {
        let (owner, taken) = worker.await.unwrap();
        for id in taken {
            assert!(by_job.insert(id.clone(), owner.clone()).is_none(), "{id} claimed twice");
        }
    }
    assert_eq!(by_job.len(), 50, "every job claimed");
    for (id, owner) in &by_job {
        let job = store.job(id).await.unwrap().unwrap();
        assert_eq!(job.state, JobState::Succeeded);
        assert_eq!(job.result, Some(json!({"by": owner})), "{id}");
        assert_eq!(job.restarts, 0);
    }
    assert!(store.claim("late", Duration::from_secs(1), Kinds::Any).await.unwrap().is_none());
}

/// A's lease lapses; B takes the job over (a restart); A can neither renew nor finish it.
async fn an_expired_lease_changes_hands_once(store: Store) {
    store.insert_job("j", "training", &json!({}), None).await.unwrap();
    // Wide enough that a loaded machine renews well inside it.
    let lease = Duration::from_secs(2);
    let first = store.claim("a", lease, Kinds::Any).await.unwrap().expect("a claims the queued job");
    assert_eq!(first.id, "j");
    assert!(store.claim("b", lease, Kinds::Any).await.unwrap().is_none(), "a holds a live lease");
    assert_eq!(store.renew("j", "a", lease).await.unwrap(), Lease::Held { cancel_requested: false });
    assert_eq!(first.runner.as_deref(), Some("a"));
    tokio::time::sleep(lease + Duration::from_millis(500)).await;
    let second =
        store.claim("b", Duration::from_secs(30), Kinds::Any).await.unwrap().expect("b takes over the lapsed lease");
    assert_eq!((second.id.as_str(), second.restarts), ("j", 1));
    assert_eq!(store.renew("j", "a", lease).await.unwrap(), Lease::Lost, "a's lease is gone");
    // A cancel through any replica reaches the holder at its next renewal.
    assert!(store.request_cancel("j").await.unwrap());
    assert_eq!(store.renew("j", "b", lease).await.unwrap(), Lease::Held { cancel_requested: true });
    assert!(!store.finish_claimed("j", "a", JobState::Succeeded, Some(&json!({"by": "a"})), None).await.unwrap());
    assert!(store.finish_claimed("j", "b", JobState::Succeeded, Some(&json!({"by": "b"})), None).await.unwrap());
    let job = store.job("j").await.unwrap().unwrap();
    assert_eq!((job.state, job.result), (JobState::Succeeded, Some(json!({"by": "b"}))));
    assert!(!store.finish_claimed("j", "b", JobState::Failed, None, Some("again")).await.unwrap(), "ends once");
    assert_eq!(store.job("j").await.unwrap().unwrap().runner, None, "the lease goes with the end");
    // A job nobody claimed yet is cancelled in place, and then no longer claimable.
    store.insert_job("k", "solve", &json!({}), None).await.unwrap();
    assert_eq!(store.waiting_count().await.unwrap(), 1);
    assert!(store.cancel_waiting("k").await.unwrap());
    assert!(!store.cancel_waiting("k").await.unwrap());
    assert_eq!(store.waiting_count().await.unwrap(), 0);
    assert!(store.claim("c", lease, Kinds::Any).await.unwrap().is_none());
}

/// A stopping replica hands its job back: only the lease's owner can, it counts a restart, the
/// next claimer gets it at once; a job a client asked to cancel is not handed back.
async fn a_released_job_goes_back_to_the_queue_unless_cancelled(store: Store) {
    let lease = Duration::from_secs(60);
    store.insert_job("r", "training", &json!({}), None).await.unwrap();
    store.claim("a", lease, Kinds::Any).await.unwrap().expect("a claims the queued job");
    assert!(!store.release("r", "b").await.unwrap(), "b holds no lease on it");
    assert!(store.release("r", "a").await.unwrap());
    let released = store.job("r").await.unwrap().unwrap();
    assert_eq!((released.state, released.restarts, released.runner), (JobState::Interrupted, 1, None));
    assert!(!store.release("r", "a").await.unwrap(), "released once");
    assert_eq!(store.waiting_count().await.unwrap(), 1);
    let again = store.claim("b", lease, Kinds::Any).await.unwrap().expect("b claims it without waiting for a lease");
    assert_eq!((again.id.as_str(), again.restarts, again.runner.as_deref()), ("r", 1, Some("b")));
    assert!(store.request_cancel("r").await.unwrap());
    assert!(!store.release("r", "b").await.unwrap(), "a cancelled job ends cancelled, not queued");
    assert_eq!(store.job("r").await.unwrap().unwrap().state, JobState::Running);
}

#[tokio::test]
async fn a_released_job_goes_back_to_the_queue_unless_cancelled_on_postgres() {
    let Some(store) = postgres("release").await else { return };
    a_released_job_goes_back_to_the_queue_unless_cancelled(store).await;
}

#[tokio::test]
async fn a_released_job_goes_back_to_the_queue_unless_cancelled_on_sqlite() {
    a_released_job_goes_back_to_the_queue_unless_cancelled(sqlite("release").await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_claimers_take_every_job_exactly_once_on_postgres() {
    let Some(store) = postgres("exclusive").await else { return };
    assert_eq!(store.backend(), "postgres");
    claims_are_exclusive(store).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_claimers_take_every_job_exactly_once_on_sqlite() {
    claims_are_exclusive(sqlite("exclusive").await).await;
}

#[tokio::test]
async fn an_expired_lease_passes_the_job_on_exactly_once_on_postgres() {
    let Some(store) = postgres("lease").await else { return };
    an_expired_lease_changes_hands_once(store).await;
}

#[tokio::test]
async fn an_expired_lease_passes_the_job_on_exactly_once_on_sqlite() {
    an_expired_lease_changes_hands_once(sqlite("lease").await).await;
}

/// The rest of the interface on Postgres: curves in order, latest, counts, recovery.
#[tokio::test]
async fn the_postgres_store_keeps_jobs_curves_and_counts() {
    let Some(store) = postgres("curves").await else { return };
    store.insert_job("a", "training", &json!({"algorithm": "ppo"}), None).await.unwrap();
    store.insert_job("b", "solve", &json!({"problem": "maxcut"}), None).await.unwrap();
    let lease = Duration::from_secs(60);
    assert_eq!(store.claim("t", lease, Kinds::Any).await.unwrap().unwrap().id, "a");
    assert_eq!(store.add_metric("a", &json!({"step": 10})).await.unwrap(), 0);
    assert_eq!(store.add_metric("a", &json!({"step": 20})).await.unwrap(), 1);
    store.set_steps("a", 20).await.unwrap();
    assert_eq!(store.claim("t", lease, Kinds::Any).await.unwrap().unwrap().id, "b");
    assert!(store.finish_claimed("b", "t", JobState::Succeeded, Some(&json!({"cut": 5})), None).await.unwrap());
    assert_eq!(store.metrics("a").await.unwrap(), vec![json!({"step": 10}), json!({"step": 20})]);
    let a = store.job("a").await.unwrap().unwrap();
    assert_eq!((a.latest, a.steps, a.state), (Some(json!({"step": 20})), 20, JobState::Running));
    let mut counts = store.count_by_state().await.unwrap();
    counts.sort();
    assert_eq!(counts, vec![("solve".into(), "succeeded".into(), 1), ("training".into(), "running".into(), 1)]);
    let recovered = store.recover().await.unwrap();
    assert_eq!(
        recovered.iter().map(|j| (j.id.as_str(), j.state, j.restarts)).collect::<Vec<_>>(),
        vec![("a", JobState::Interrupted, 1)]
    );
    assert_eq!(store.jobs("solve", Some(JobState::Succeeded), None, 10).await.unwrap().len(), 1);
    store.clear_metrics("a").await.unwrap();
    assert!(store.metrics("a").await.unwrap().is_empty());
    assert!(store.ping().await);
}
