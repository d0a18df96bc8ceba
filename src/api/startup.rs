//! Builds and runs the HTTP server.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use actix_web::{get, web, App, HttpResponse, HttpServer};
use serde_json::json;

use super::plans;
use super::problem::{not_found_route, Problem};
use crate::plan::PlanSet;

/// What every handler may read. Plans are loaded once and never change while running.
pub struct AppState {
    pub plans: Arc<PlanSet>,
}

#[derive(Debug, Clone)]
pub struct ServeConfig {
    pub bind: String,
    pub plans_dir: PathBuf,
    pub data_dir: PathBuf,
}

/// Largest request body accepted, in bytes.
pub const MAX_BODY_BYTES: usize = 256 * 1024;

#[get("/healthz")]
async fn healthz(state: web::Data<AppState>) -> HttpResponse {
    HttpResponse::Ok().json(json!({"status": "ok", "plans": state.plans.len()}))
}

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.service(healthz)
        .service(plans::list)
        .service(plans::plan_diff)
        .service(plans::versions)
        .service(plans::show);
}

/// Runs the service until it is stopped; prints `listening on http://ADDR` once bound.
pub async fn serve(config: ServeConfig, plans: PlanSet) -> std::io::Result<()> {
    std::fs::create_dir_all(&config.data_dir)?;
    let state = web::Data::new(AppState {
        plans: Arc::new(plans),
    });
    let server = HttpServer::new(move || {
        App::new()
            .app_data(state.clone())
            .app_data(
                web::JsonConfig::default()
                    .limit(MAX_BODY_BYTES)
                    .error_handler(|err, _| {
                        Problem::bad_request("malformed_json", err.to_string()).into()
                    }),
            )
            .app_data(web::QueryConfig::default().error_handler(|err, _| {
                Problem::bad_request("malformed_query", err.to_string()).into()
            }))
            .app_data(web::PathConfig::default().error_handler(|err, _| {
                Problem::bad_request("malformed_path", err.to_string()).into()
            }))
            .configure(configure)
            .default_service(web::to(|| async {
                Err::<HttpResponse, Problem>(not_found_route())
            }))
    })
    .bind(&config.bind)?;
    let addrs: Vec<SocketAddr> = server.addrs();
    for a in &addrs {
        println!("listening on http://{a}");
    }
    server.run().await
}
