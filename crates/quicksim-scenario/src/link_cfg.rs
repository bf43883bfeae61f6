//! A link direction's loss model, drop lists and link model from the scenario's tables, checked
//! with the field path in every error; files a link model names (traces) are read here (once per
//! file per run).

use crate::schema::{DropCfg, FlowCfg, LossCfg};
use crate::ScenarioError;
use quicksim_net::model::{FileSource, Loaded, MakeFromText};
use quicksim_net::{DropList, GilbertElliott, LossModel};
use std::collections::HashMap;
use std::io::Read;
use std::sync::Arc;

/// The largest trace file read (a day of a 1 Gbit/s trace is about 700 MB; recorded cellular
/// traces are a few MB): a bound, so that a mistyped path to a huge file fails at once.
const MAX_TRACE_BYTES: u64 = 256 << 20;

fn err(path: impl Into<String>, msg: impl Into<String>) -> ScenarioError {
    ScenarioError::new(path.into(), msg.into())
}

fn probability(v: f64, path: String) -> Result<f64, ScenarioError> {
    if (0.0..=1.0).contains(&v) {
        Ok(v)
    } else {
        Err(err(path, format!("{v} is not a probability in [0, 1]")))
    }
}

/// The loss model of a `loss` table at `path`.
pub(crate) fn loss_model(l: &Option<LossCfg>, path: &str) -> Result<LossModel, ScenarioError> {
    Ok(match l {
        None | Some(LossCfg::None) => LossModel::None,
        Some(LossCfg::Bernoulli { p }) => LossModel::Bernoulli(probability(*p, format!("{path}.p"))?),
        Some(LossCfg::Periodic { every, first }) => {
            if *every == 0 {
                return Err(err(
                    format!("{path}.every"),
                    "0: at least 1 packet must be delivered between losses",
                ));
            }
            let first = first.unwrap_or(*every);
            if first > *every {
                return Err(err(
                    format!("{path}.first"),
                    format!("{first}: the first loss must come within `every` = {every} packets"),
                ));
            }
            LossModel::Periodic { every: *every, first }
        }
        Some(LossCfg::GilbertElliott { p, r, loss_good, loss_bad }) => {
            let ge = GilbertElliott {
                p: probability(*p, format!("{path}.p"))?,
                r: probability(*r, format!("{path}.r"))?,
                loss_good: probability(loss_good.unwrap_or(0.0), format!("{path}.loss_good"))?,
                loss_bad: probability(loss_bad.unwrap_or(1.0), format!("{path}.loss_bad"))?,
            };
            LossModel::GilbertElliott(ge)
        }
    })
}

/// The drop lists of a `drop` array at `path`; a list's `flow` must name one of `flows`
/// (packets carry the flow's index).
pub(crate) fn drop_lists(
    d: &[DropCfg],
    path: &str,
    flows: &[FlowCfg],
) -> Result<Vec<DropList>, ScenarioError> {
    d.iter()
        .enumerate()
        .map(|(i, c)| {
            let flow = match &c.flow {
                None => None,
                Some(name) => match flows.iter().position(|f| &f.name == name) {
                    Some(k) => Some(k as u32),
                    None => return Err(err(format!("{path}[{i}].flow"), format!("{name:?} is not a flow"))),
                },
            };
            let mut packets = c.packets.clone();
            packets.sort_unstable();
            if let Some(w) = packets.windows(2).find(|w| w[0] == w[1]) {
                return Err(err(format!("{path}[{i}].packets"), format!("{} is listed twice", w[0])));
            }
            Ok(DropList { flow, packets })
        })
        .collect()
}

/// Files read so far in this build (trace files), as the model that named them made them: a
/// file used by many links is read and held once.
#[derive(Default)]
pub(crate) struct Traces(HashMap<String, Loaded>);

impl FileSource for Traces {
    fn load(&mut self, path: &str, make: &MakeFromText) -> Result<Loaded, String> {
        if let Some(v) = self.0.get(path) {
            return Ok(Arc::clone(v));
        }
        let v = make(&read_file(path)?)?;
        self.0.insert(path.to_string(), Arc::clone(&v));
        Ok(v)
    }
}

/// A file's text, or a one-line reason (the caller names the file).
fn read_file(file: &str) -> Result<String, String> {
    let meta = std::fs::metadata(file).map_err(|e| format!("cannot read the trace: {e}"))?;
    if !meta.is_file() {
        return Err("is not a file".into());
    }
    if meta.len() > MAX_TRACE_BYTES {
        return Err(format!(
            "{} bytes is larger than the limit of {MAX_TRACE_BYTES} for a trace",
            meta.len()
        ));
    }
    let mut text = String::new();
    std::fs::File::open(file)
        .and_then(|f| f.take(MAX_TRACE_BYTES).read_to_string(&mut text))
        .map_err(|e| format!("cannot read the trace: {e}"))?;
    Ok(text)
}
