//! Which log a request goes to ([`crate::service::logs`]): with `--log-per-operator`, an
//! operator's commands and reads go to the operator's log, an id scoped to an operator
//! (`op:t1.3`) to that operator's log, and the audit routes to the log `?log=` names (an
//! operator's own by default for an operator, the service's for everyone else). Without it,
//! every request goes to the one log.

use std::sync::Arc;

use super::auth::{forbidden, Caller};
use super::problem::Problem;
use super::startup::AppState;
use crate::service::Service;

/// `?log=` of the audit routes: `service`, or an operator's id.
pub const SERVICE_LOG: &str = "service";

impl AppState {
    /// The log the operator's commands are written to: its own (made on its first command)
    /// with a log per operator, else the service's. The empty operator (a regulator's or an
    /// admin's command) writes the service's.
    pub async fn writer_of(&self, operator: &str) -> Result<Arc<Service>, Problem> {
        let Some(logs) = &self.logs else {
            return Ok(self.service.clone());
        };
        if operator.is_empty() {
            return Ok(self.service.clone());
        }
        if let Some(s) = logs.get(operator) {
            return Ok(s);
        }
        let (logs, op) = (logs.clone(), operator.to_owned());
        match actix_web::web::block(move || logs.get_or_make(&op)).await {
            Ok(Ok(s)) => Ok(s),
            Ok(Err(e)) => {
                tracing::error!(operator, error = %e, "cannot make the operator's log");
                Err(super::problem::unavailable(&format!(
                    "the operator's log cannot be opened now ({e}); nothing was recorded, retry \
                     with the same Idempotency-Key"
                )))
            }
            Err(_) => Err(super::problem::unavailable("the service is stopping")),
        }
    }

    /// The operator's log if it has one, else the service's (without making one).
    pub fn log_of(&self, operator: &str) -> Arc<Service> {
        self.logs
            .as_ref()
            .and_then(|logs| logs.get(operator))
            .unwrap_or_else(|| self.service.clone())
    }

    /// The log `name` names: [`SERVICE_LOG`], or an operator's log that has been made.
    pub fn log_by_name(&self, name: &str) -> Result<Arc<Service>, Problem> {
        if name == SERVICE_LOG {
            return Ok(self.service.clone());
        }
        self.logs
            .as_ref()
            .and_then(|logs| logs.get(name))
            .ok_or_else(|| no_such_log(name, self.logs.is_none()))
    }

    /// Every log: the service's (named [`SERVICE_LOG`]), then each operator's.
    pub fn every_log(&self) -> Vec<(String, Arc<Service>)> {
        let mut all = vec![(SERVICE_LOG.to_owned(), self.service.clone())];
        if let Some(logs) = &self.logs {
            all.extend(logs.all());
        }
        all
    }

    /// A read pool on every log, the service's first: with several nodes, also on the
    /// operators' logs other nodes write (read from the store). Blocks: call it off the async
    /// workers.
    pub fn every_pool(&self) -> Result<Vec<crate::store::ReadPool>, crate::store::StoreError> {
        let mut all = vec![self.service.pool.clone()];
        if let Some(logs) = &self.logs {
            let mut conn = self
                .service
                .pool
                .get()
                .map_err(|e| crate::store::StoreError::Pool(e.to_string()))?;
            all.extend(logs.every_pool(&mut conn)?.into_iter().map(|(_, p)| p));
        }
        Ok(all)
    }

    /// The log that holds a table, round or bet id as the log names it: an id scoped to an
    /// operator whose log exists is in that log; every other id (ids logged before they were
    /// scoped, or by a deployment of one log) is in the service's.
    pub fn log_holding(&self, id: &str) -> Arc<Service> {
        match id.split_once(crate::round::SCOPE) {
            Some((op, _)) => self.log_of(op),
            None => self.service.clone(),
        }
    }

    /// The logs that may hold an id, in the order to read them: [`AppState::log_holding`], then
    /// the service's (a table an operator closed before the deployment wrote a log per
    /// operator is there, under the same scoped id).
    pub fn logs_holding(&self, id: &str) -> Vec<Arc<Service>> {
        let first = self.log_holding(id);
        if Arc::ptr_eq(&first, &self.service) {
            vec![first]
        } else {
            vec![first, self.service.clone()]
        }
    }

    /// The log an audit route reads: `log` as asked (`service` or an operator's id; an
    /// operator may name only its own), else the caller's own log for an operator with a log
    /// of its own, else the service's.
    pub fn log_named(&self, caller: &Caller, log: Option<&str>) -> Result<Arc<Service>, Problem> {
        match self.operator_log_named(caller, log)? {
            None => Ok(self.service.clone()),
            Some((l, true)) => self.log_by_name(&l),
            // An operator without a log of its own (none made yet, or a deployment of one
            // log) has its entries, or those of its keys, in the service's.
            Some((o, false)) => Ok(self.log_of(&o)),
        }
    }

    /// The operator's log an audit route reads, by name, without opening it: `None` for the
    /// service's; else the operator and whether the request named it (`?log=`; else it is the
    /// caller's own, which may have no log of its own yet); `403` for an operator naming
    /// another's. [`AppState::log_named`] opens what it names.
    pub fn operator_log_named(
        &self,
        caller: &Caller,
        log: Option<&str>,
    ) -> Result<Option<(String, bool)>, Problem> {
        let own = caller.operator.as_deref().filter(|_| !caller.reads_all());
        match (log, own) {
            (Some(SERVICE_LOG), _) | (None, None) => Ok(None),
            (Some(l), Some(o)) if l != o => Err(forbidden("an operator reads only its own log")),
            (Some(l), _) => Ok(Some((l.to_owned(), true))),
            (None, Some(o)) => Ok(Some((o.to_owned(), false))),
        }
    }
}

/// `404 no_such_log`: `name` names no log (`one_log`: the deployment writes only the
/// service's).
pub(super) fn no_such_log(name: &str, one_log: bool) -> Problem {
    let detail = if one_log {
        format!("no log {name:?}: this deployment writes one log, `{SERVICE_LOG}`")
    } else {
        format!(
            "no log {name:?}: `log` is `{SERVICE_LOG}` or the id of an operator whose log has \
             been made (its first command makes it)"
        )
    };
    Problem::not_found("no_such_log", detail)
}
