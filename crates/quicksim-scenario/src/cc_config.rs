//! Congestion-controller settings from a scenario (`cc = "name"` or `cc = { algo = "name", ... }`
//! in `[quic]`, `[tcp]` or a flow's own table) resolved into the spec a transport builds its
//! controller from: a built-in algorithm with its own `Config`, or a plugin's factory.

use crate::plugins::Plugins;
use crate::schema::CcCfg;
use crate::ScenarioError;
use quicksim_cc::{BuiltinConfig, CcSpec};

fn err(path: impl Into<String>, msg: impl Into<String>) -> ScenarioError {
    ScenarioError::new(path.into(), msg.into())
}

/// Resolves `cc` settings into controller specs: the built-in algorithms first, then the run's
/// plugins. Remembers what it resolved, so flows with the same settings share one spec (and a
/// plugin's factory is made once).
pub(crate) struct CcResolver<'a> {
    pub(crate) plugins: &'a Plugins,
    pub(crate) done: Vec<(CcCfg, CcSpec)>,
}

impl CcResolver<'_> {
    /// The controller of the `cc` settings at `path` (errors name `path` and the field in it).
    pub(crate) fn resolve(&mut self, cc: CcCfg, path: &str) -> Result<CcSpec, ScenarioError> {
        if let Some((_, spec)) = self.done.iter().find(|(c, _)| *c == cc) {
            return Ok(spec.clone());
        }
        let path = path.to_string();
        let at =
            |sub: &str| if sub.is_empty() || sub == "." { path.clone() } else { format!("{path}.{sub}") };
        let params = serde_json::Value::Object(cc.params.clone());
        let mut track = serde_path_to_error::Track::new();
        let de = serde_path_to_error::Deserializer::new(params.clone(), &mut track);
        let spec = match BuiltinConfig::parse(&cc.algo, de) {
            Ok(Some(c)) => CcSpec::Builtin(c),
            Err(e) => return Err(err(at(&track.path().to_string()), e.to_string())),
            Ok(None) => match self.plugins.controller(&cc.algo) {
                Some(plugin) => {
                    let factory = plugin(&params).map_err(|e| err(at(&e.path), e.message))?;
                    CcSpec::Factory { name: cc.algo.as_str().into(), factory }
                }
                None => {
                    let names: Vec<&str> =
                        quicksim_cc::NAMES.iter().copied().chain(self.plugins.controller_names()).collect();
                    return Err(err(
                        path,
                        format!("{:?} is not a congestion controller; use one of {names:?}", cc.algo),
                    ));
                }
            },
        };
        self.done.push((cc, spec.clone()));
        Ok(spec)
    }
}
