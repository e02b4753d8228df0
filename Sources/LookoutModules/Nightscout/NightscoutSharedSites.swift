import Foundation
import LookoutConfig
import NightscoutKit

/// Nightscout profiles that name one site, however spelled (`lookout doctor` reports them).
public enum NightscoutSharedSites {
    /// Groups of Nightscout profiles that name one site however spelled (two or more each, by
    /// their site's canonical key), for `lookout doctor`: they share one remote-command budget
    /// under the strictest limits of those that set any.
    public static func groups(_ config: HostConfig) -> [(site: String, profiles: [String])] {
        let named = config.profiles(service: "nightscout").sorted().compactMap { name -> (String, Set<String>, String)? in
            guard let profile = config.profile(service: "nightscout", name: name),
                  let keys = NightscoutRemoteSettings.siteKeys(profile),
                  let url = try? profile.string("url"),
                  let configuration = try? NightscoutConfiguration(site: url, credentials: .none) else { return nil }
            return (name, keys, RemoteCommandSite.key(for: configuration.siteURL))
        }
        var groups: [(site: String, keys: Set<String>, profiles: [String])] = []
        for (name, keys, site) in named {
            let joined = groups.indices.filter { !groups[$0].keys.isDisjoint(with: keys) }
            var group = (site: site, keys: keys, profiles: [name])
            for index in joined.reversed() {
                group.keys.formUnion(groups[index].keys)
                group.profiles = groups[index].profiles + group.profiles
                group.site = groups[index].site
                groups.remove(at: index)
            }
            groups.append(group)
        }
        return groups.filter { $0.profiles.count > 1 }.map { ($0.site, $0.profiles.sorted()) }
    }
}
