//! `--pin`: where the server and the bench's driver thread run.
//!
//! On a small machine the scheduler decides whether a server shares the driver's CPU or gets
//! one of its own, and one program can run up to five times faster in one placement than in
//! the other (the floor on 2 vCPUs: 3.5 M calls/s beside the driver, 0.6–0.8 M apart;
//! BENCHMARKS.md). Unpinned, two runs can land in different placements and their ratio says
//! little. Pinned, runs compare like with like: `same` puts both on the first CPU this process
//! may use; `split` puts the server on the second.

use nix::sched::{sched_getaffinity, sched_setaffinity, CpuSet};
use nix::unistd::Pid;

/// Where the server runs relative to the driver.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    /// The server on the driver's CPU.
    Same,
    /// The server on a CPU of its own.
    Split,
}

impl Placement {
    pub fn name(self) -> &'static str {
        match self {
            Placement::Same => "same",
            Placement::Split => "split",
        }
    }
}

/// The CPUs one bench uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pin {
    pub placement: Placement,
    pub driver: usize,
    pub server: usize,
}

impl Pin {
    /// Chooses from `allowed`, the CPUs this process may use, in ascending order.
    pub fn choose(placement: Placement, allowed: &[usize]) -> Result<Pin, String> {
        let (driver, server) = match (placement, allowed) {
            (_, []) => return Err("--pin: this process may use no CPU".to_owned()),
            (Placement::Same, [first, ..]) => (*first, *first),
            (Placement::Split, [first, second, ..]) => (*first, *second),
            (Placement::Split, [only]) => {
                return Err(format!(
                    "--pin split needs two CPUs; this process may only use CPU {only} \
                     (see `taskset -p $$`); use --pin same, or no --pin"
                ))
            }
        };
        Ok(Pin {
            placement,
            driver,
            server,
        })
    }
}

/// The CPUs the calling thread may use, in ascending order.
pub fn allowed() -> Result<Vec<usize>, String> {
    let set = affinity()?;
    Ok((0..CpuSet::count())
        .filter(|&cpu| set.is_set(cpu).unwrap_or(false))
        .collect())
}

/// The calling thread's CPU set.
fn affinity() -> Result<CpuSet, String> {
    sched_getaffinity(Pid::from_raw(0))
        .map_err(|e| format!("--pin: cannot read this thread's CPU affinity: {e}"))
}

/// Pins the calling thread to `cpu`.
fn pin_thread(cpu: usize) -> Result<(), String> {
    let mut set = CpuSet::new();
    set.set(cpu)
        .and_then(|()| sched_setaffinity(Pid::from_raw(0), &set))
        .map_err(|e| format!("--pin: cannot pin the bench to CPU {cpu}: {e}"))
}

/// While alive, the calling thread runs on the driver's CPU; dropping it gives the thread back
/// the CPUs it had.
#[derive(Debug)]
pub struct Pinned {
    before: Option<CpuSet>,
}

impl Pinned {
    /// Pins the calling thread to `pin`'s driver CPU; with `None`, changes nothing.
    pub fn driver(pin: Option<Pin>) -> Result<Pinned, String> {
        let Some(p) = pin else {
            return Ok(Pinned { before: None });
        };
        let before = affinity()?;
        pin_thread(p.driver)?;
        Ok(Pinned {
            before: Some(before),
        })
    }
}

impl Drop for Pinned {
    fn drop(&mut self) {
        if let Some(before) = &self.before {
            let _ = sched_setaffinity(Pid::from_raw(0), before);
        }
    }
}

/// Runs `spawn` with the calling thread on the server's CPU, so the child and every thread it
/// starts inherit it (as `taskset` would), then moves the thread back to the driver's.
pub fn on_server_cpu<T>(pin: Option<Pin>, spawn: impl FnOnce() -> T) -> Result<T, String> {
    let Some(p) = pin else {
        return Ok(spawn());
    };
    pin_thread(p.server)?;
    let spawned = spawn();
    pin_thread(p.driver)?;
    Ok(spawned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_takes_the_first_cpu_for_both_and_split_the_second_for_the_server() {
        let same = Pin::choose(Placement::Same, &[2, 5, 7]).unwrap();
        assert_eq!((same.driver, same.server), (2, 2));
        let split = Pin::choose(Placement::Split, &[2, 5, 7]).unwrap();
        assert_eq!((split.driver, split.server), (2, 5));
    }

    #[test]
    fn split_on_one_cpu_says_which_cpu_and_what_to_do() {
        let e = Pin::choose(Placement::Split, &[3]).unwrap_err();
        assert!(e.contains("needs two CPUs"), "{e}");
        assert!(e.contains("only use CPU 3"), "{e}");
        assert!(e.contains("--pin same"), "{e}");
        assert!(Pin::choose(Placement::Same, &[]).is_err());
    }

    /// Runs on a thread of its own: pinning changes only the calling thread.
    #[test]
    fn a_child_spawned_under_a_pin_runs_on_the_server_cpu_and_the_thread_returns() {
        std::thread::spawn(|| {
            let cpus = allowed().unwrap();
            let placement = if cpus.len() >= 2 {
                Placement::Split
            } else {
                Placement::Same
            };
            let pin = Pin::choose(placement, &cpus).unwrap();
            {
                let _pinned = Pinned::driver(Some(pin)).unwrap();
                assert_eq!(allowed().unwrap(), vec![pin.driver]);
                let out = on_server_cpu(Some(pin), || {
                    std::process::Command::new("sh")
                        .args(["-c", "grep Cpus_allowed_list /proc/self/status"])
                        .output()
                })
                .unwrap()
                .unwrap();
                let text = String::from_utf8_lossy(&out.stdout);
                assert_eq!(
                    text.split_whitespace().last(),
                    Some(pin.server.to_string().as_str()),
                    "{text}"
                );
                assert_eq!(allowed().unwrap(), vec![pin.driver]);
            }
            assert_eq!(allowed().unwrap(), cpus);
        })
        .join()
        .unwrap();
    }
}
